# How far the H200's block-scaled fp8 products are from the exact ones: tilec's (tilec::w8a8_block_fp8_matmul, from a
# bundle: TILEC_TORCH_BUNDLES) and torch._scaled_mm's block-wise form. Run on the GPU machine with the
# package beside it (bench/gpu/prepare.sh) and the bundle of bench/gpu/torch_test_bundle.py:
#   PYTHONPATH=. TILEC_TORCH_BUNDLES=torch-bundle python3 block_fp8_accumulation.py [M N K]
import sys

import torch
import tilec.torch  # noqa: F401

torch.manual_seed(0)
M, N, K = (int(v) for v in sys.argv[1:4]) if len(sys.argv) > 3 else (33, 200, 384)  # test_torch's GPU test
g = 128
print("M=%d N=%d K=%d" % (M, N, K))
fp8 = torch.float8_e4m3fn
fmax = torch.finfo(fp8).max
x, w = torch.randn(M, K, device="cuda"), torch.randn(N, K, device="cuda")
sa = x.view(M, K // g, g).abs().amax(-1) / fmax
a = (x.view(M, K // g, g) / sa[..., None]).to(fp8).view(M, K)
nb = -(-N // g)
wp = torch.zeros(nb * g, K, device="cuda")
wp[:N] = w
sb = wp.view(nb, g, K // g, g).abs().amax((1, 3)) / fmax
b = (wp.view(nb, g, K // g, g) / sb[:, None, :, None]).to(fp8).view(nb * g, K)[:N].contiguous()
a_deq = (a.float().view(M, K // g, g) * sa[..., None]).view(M, K).double()
b_deq = (b.float().view(N, K // g, g) * sb.repeat_interleave(g, 0)[:N, :, None]).view(N, K).double()
ref, mag = a_deq @ b_deq.t(), a_deq.abs() @ b_deq.abs().t()
for name, run in (("tilec", lambda: torch.ops.tilec.w8a8_block_fp8_matmul(a, b, sa, sb, [g, g])),
                  ("torch._scaled_mm", lambda: torch._scaled_mm(a, b.t(), scale_a=sa.t().contiguous().t(),
                                                                scale_b=sb.t(), out_dtype=torch.bfloat16))):
    try:
        y = run().double()
        e = (y - ref).abs()
        print("%s (bf16 out): max |y - ref| / sum|ab| = 2^%.2f, max |y - ref| / |ref| (|ref| > 1) = 2^%.2f"
              % (name, torch.log2((e / mag).max()).item(), torch.log2((e / ref.abs())[ref.abs() > 1].max()).item()))
    except Exception as ex:
        print("%s: %s" % (name, str(ex).splitlines()[0][:200]))
