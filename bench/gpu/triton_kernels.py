"""Triton kernels of the peer baseline (triton_baselines.py): a tiled GEMM and
a FlashAttention forward, written the way Triton's tutorials teach them, so
the rows compare tilec with what a user would write in Triton instead.
Importing this module needs triton; triton_baselines.py records its absence.

gemm: C [M, N] = A [M, K] @ W [N, K]^T (W the nn.Linear weight), bf16 in and
out, f32 accumulation. Each program computes one BLOCK_M x BLOCK_N tile of C
over K in BLOCK_K steps (tl.dot); programs are ordered GROUP_M tile rows at a
time (group-M ordering) so that the A rows and W columns a group reads stay
in L2 while the group runs. Masked loads and stores cover any M, N, K.

attention: O = softmax(Q K^T * scale) V per (batch, head) on [B, H, S, D]
tensors of any strides, causal or not. Each program owns BLOCK_M query rows
and walks the keys BLOCK_N at a time with the online softmax: a running row
maximum m and row sum l in base 2 (exp2 of scores pre-multiplied by log2 e),
the accumulator rescaled by exp2(m_old - m_new) whenever the maximum grows,
and divided by l once at the end. Causal programs skip the key blocks above
the diagonal and mask only the blocks the diagonal crosses; keys past the
sequence are masked only when its length is not a multiple of BLOCK_N. Head sizes that
are not powers of two (192) are padded to the next one with masked loads (the
padding adds zeros to every dot product).
"""
import triton
import triton.language as tl


@triton.jit
def gemm_kernel(a_ptr, w_ptr, c_ptr, M, N, K,
                stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Group-M ordering: consecutive programs walk down GROUP_M tile rows of one
    # tile column before moving to the next column.
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group

    rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # A tile [BLOCK_M, BLOCK_K]; W^T tile [BLOCK_K, BLOCK_N] read from W [N, K].
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    w_tile = w_ptr + rk[:, None] * stride_wk + rn[None, :] * stride_wn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_left = K - k0
        a = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        w = tl.load(w_tile, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, w, acc)
        a_tile += BLOCK_K * stride_ak
        w_tile += BLOCK_K * stride_wk
    c_tile = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _attend_keys(acc, m_i, l_i, q, k_base, v_base, stride_kn, stride_kd, stride_vn, stride_vd,
                 rows, start, stop, seq, qk_scale,
                 HEAD_DQ: tl.constexpr, HEAD_DV: tl.constexpr, BLOCK_DQ: tl.constexpr, BLOCK_DV: tl.constexpr,
                 BLOCK_N: tl.constexpr, CAUSAL_MASK: tl.constexpr, SEQ_MASK: tl.constexpr):
    """Folds key blocks [start, stop) into the running (acc, m, l) of the rows;
    SEQ_MASK: the last block runs past seq (scores of keys beyond it masked)."""
    dq = tl.arange(0, BLOCK_DQ)
    dv = tl.arange(0, BLOCK_DV)
    for n0 in range(start, stop, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        in_seq = cols < seq
        # K^T block [BLOCK_DQ, BLOCK_N] and V block [BLOCK_N, BLOCK_DV].
        kt = tl.load(k_base + cols[None, :] * stride_kn + dq[:, None] * stride_kd,
                     mask=in_seq[None, :] & (dq[:, None] < HEAD_DQ), other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vn + dv[None, :] * stride_vd,
                    mask=in_seq[:, None] & (dv[None, :] < HEAD_DV), other=0.0)
        s = tl.dot(q, kt) * qk_scale   # log2 units
        if SEQ_MASK:
            s = tl.where(in_seq[None, :], s, float("-inf"))
        if CAUSAL_MASK:
            s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    return acc, m_i, l_i


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq, heads, sm_scale,
                     stride_qb, stride_qh, stride_qs, stride_qd,
                     stride_kb, stride_kh, stride_ks, stride_kd,
                     stride_vb, stride_vh, stride_vs, stride_vd,
                     stride_ob, stride_oh, stride_os, stride_od,
                     HEAD_DQ: tl.constexpr, HEAD_DV: tl.constexpr, BLOCK_DQ: tl.constexpr, BLOCK_DV: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, SEQ_MASK: tl.constexpr):
    # The last query blocks first: causal ones attend to the most keys, and
    # starting them first keeps the tail of the grid short.
    tile_m = tl.num_programs(0) - 1 - tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // heads
    h = bh % heads
    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    o_base = o_ptr + b * stride_ob + h * stride_oh

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dq = tl.arange(0, BLOCK_DQ)
    dv = tl.arange(0, BLOCK_DV)
    q = tl.load(q_base + rows[:, None] * stride_qs + dq[None, :] * stride_qd,
                mask=(rows[:, None] < seq) & (dq[None, :] < HEAD_DQ), other=0.0)
    qk_scale = sm_scale * 1.4426950408889634   # exp(x) = exp2(x log2 e)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_DV), dtype=tl.float32)
    if CAUSAL:
        # Keys below the first row of the block need no mask (BLOCK_M is a
        # multiple of BLOCK_N); the diagonal blocks up to the last row do.
        diagonal = tile_m * BLOCK_M
        acc, m_i, l_i = _attend_keys(acc, m_i, l_i, q, k_base, v_base, stride_ks, stride_kd, stride_vs, stride_vd,
                                     rows, 0, diagonal, seq, qk_scale, HEAD_DQ, HEAD_DV, BLOCK_DQ, BLOCK_DV,
                                     BLOCK_N, False, False)
        acc, m_i, l_i = _attend_keys(acc, m_i, l_i, q, k_base, v_base, stride_ks, stride_kd, stride_vs, stride_vd,
                                     rows, diagonal, tl.minimum(diagonal + BLOCK_M, seq), seq, qk_scale,
                                     HEAD_DQ, HEAD_DV, BLOCK_DQ, BLOCK_DV, BLOCK_N, True, SEQ_MASK)
    else:
        acc, m_i, l_i = _attend_keys(acc, m_i, l_i, q, k_base, v_base, stride_ks, stride_kd, stride_vs, stride_vd,
                                     rows, 0, seq, seq, qk_scale, HEAD_DQ, HEAD_DV, BLOCK_DQ, BLOCK_DV,
                                     BLOCK_N, False, SEQ_MASK)
    o = acc / l_i[:, None]
    tl.store(o_base + rows[:, None] * stride_os + dv[None, :] * stride_od, o.to(o_ptr.dtype.element_ty),
             mask=(rows[:, None] < seq) & (dv[None, :] < HEAD_DV))


def gemm(a, w, c, cfg):
    """Launches gemm_kernel with cfg (block sizes, GROUP_M, num_warps, num_stages)."""
    M, K = a.shape
    N = w.shape[0]
    grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]),)
    gemm_kernel[grid](a, w, c, M, N, K, a.stride(0), a.stride(1), w.stride(0), w.stride(1),
                      c.stride(0), c.stride(1), **cfg)
    return c


def attention(q, k, v, o, causal, scale, cfg):
    """Launches attention_kernel on [B, H, S, D] tensors with cfg (BLOCK_M,
    BLOCK_N, num_warps, num_stages)."""
    B, H, S, D = q.shape
    Dv = v.shape[-1]
    grid = (triton.cdiv(S, cfg["BLOCK_M"]), B * H)
    attention_kernel[grid](q, k, v, o, S, H, scale, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                           HEAD_DQ=D, HEAD_DV=Dv, BLOCK_DQ=triton.next_power_of_2(D),
                           BLOCK_DV=triton.next_power_of_2(Dv), CAUSAL=causal,
                           SEQ_MASK=S % cfg["BLOCK_N"] != 0, **cfg)
    return o
