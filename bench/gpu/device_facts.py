"""Device facts the cost model lacks, measured on the GPU machine the way the
harness times kernels (CUDA events on PyTorch's stream around each call,
median after warm-up; harness.Env.time_ms): the floor of a launch that does
next to nothing, and the memory bandwidth a device copy reaches at the sizes
the element-wise kernels move (docs/cost-model.md, "How far off it is").

  python3 device_facts.py --out facts.json      (on the GPU machine)

Every figure is a measurement of this run; none is a datasheet value.
"""
import argparse
import json
import time

from harness import Env, driver_version


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    a = ap.parse_args()
    import torch
    env = Env(argparse.Namespace(device="cuda", warmup=a.warmup, reps=a.reps, seed=0))
    facts = {"meta": {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                      "device": torch.cuda.get_device_name(), "driver": driver_version(), "torch": torch.__version__,
                      "timing": "CUDA events on torch's current stream around each call; median of reps after "
                                "warmup (harness.Env.time_ms)", "reps": a.reps, "warmup": a.warmup},
             "floor": {}, "copy": []}

    # Launches that do (next to) nothing: what a timed call costs before any work.
    one = torch.zeros(1, device="cuda")
    facts["floor"]["sleep0_ms"] = env.time_ms(lambda: torch.cuda._sleep(0))
    facts["floor"]["add_one_element_ms"] = env.time_ms(lambda: one.add_(1))
    # The same tiny launch 100 times between one pair of events: the GPU's own
    # time per launch once launches queue back to back.
    def hundred():
        for _ in range(100):
            one.add_(1)
    t = env.time_ms(hundred, reps=max(10, a.reps // 10))
    facts["floor"]["add_one_element_back_to_back_ms"] = {k: (v / 100 if k != "reps" else v) for k, v in t.items()}

    # Device copies: bytes read plus bytes written over the time.
    for mib in (8, 32, 64, 128, 512, 2048):
        n = mib * 2 ** 20 // 2
        src = torch.empty(n, device="cuda", dtype=torch.bfloat16).normal_()
        dst = torch.empty_like(src)
        t = env.time_ms(lambda: dst.copy_(src), reps=min(a.reps, 50))
        moved = 2.0 * n * 2
        facts["copy"].append({"mib_each_way": mib, "bytes_moved": moved, **t,
                              "tb_per_s": moved / (t["ms"] * 1e-3) / 1e12})
        del src, dst
    json.dump(facts, open(a.out, "w"), indent=1)
    print(json.dumps(facts["floor"], indent=1))
    for c in facts["copy"]:
        print("copy %5d MiB: %.4f ms, %.2f TB/s" % (c["mib_each_way"], c["ms"], c["tb_per_s"]))


if __name__ == "__main__":
    main()
