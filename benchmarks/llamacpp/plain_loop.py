"""llama-bench's loop (its test_prompt + test_gen, one sequence) on llama.cpp's C API only, run as its own process
(``python -m benchmarks.llamacpp.plain_loop GGUF N_CTX N_BATCH THREADS PROMPT GEN REPS WARMUP SEED``): one JSON line
with llama.cpp's counters (``llama_perf_context``) and the wall clock of every timed repetition. Imports nothing of
edgeopt: it is the reference edgeopt's numbers are judged against."""

import json
import sys
import time

import llama_cpp as lc
import numpy as np


def main(argv: list[str]) -> None:
    path = argv[0]
    n_ctx, n_batch, threads, prompt_len, gen_len, reps, warmup, seed = map(int, argv[1:9])
    lc.llama_backend_init()
    mp = lc.llama_model_default_params()
    mp.n_gpu_layers = 0
    model = lc.llama_model_load_from_file(path.encode(), mp)
    cp = lc.llama_context_default_params()
    cp.n_ctx, cp.n_batch, cp.n_ubatch = n_ctx, n_batch, n_batch
    cp.n_threads = cp.n_threads_batch = threads
    cp.flash_attn_type = lc.LLAMA_FLASH_ATTN_TYPE_DISABLED
    cp.no_perf = False
    ctx = lc.llama_init_from_model(model, cp)
    n_vocab = lc.llama_vocab_n_tokens(lc.llama_model_get_vocab(model))
    mem = lc.llama_get_memory(ctx)
    rng = np.random.default_rng(seed)
    def decode(ids):
        arr = (lc.llama_token * len(ids))(*ids)
        rc = lc.llama_decode(ctx, lc.llama_batch_get_one(arr, len(ids)))
        if rc != 0:
            raise SystemExit(f"llama_decode returned {rc}")
    out = {"n_p_eval": [], "t_p_eval_ms": [], "n_eval": [], "t_eval_ms": [], "wall_pp_s": [], "wall_tg_s": [],
           "threads": lc.llama_n_threads(ctx), "n_ctx": lc.llama_n_ctx(ctx),
           "system_info": lc.llama_print_system_info().decode(errors="replace")}
    for rep in range(warmup + reps):
        lc.llama_memory_clear(mem, True)
        prompt = [int(t) for t in rng.integers(2, n_vocab, size=prompt_len)]
        lc.llama_perf_context_reset(ctx)
        t0 = time.perf_counter()
        for i in range(0, prompt_len, n_batch):
            decode(prompt[i:i + n_batch])
        lc.llama_synchronize(ctx)
        t1 = time.perf_counter()
        for _ in range(gen_len - 1):
            decode([int(rng.integers(2, n_vocab))])
            lc.llama_synchronize(ctx)
        t2 = time.perf_counter()
        d = lc.llama_perf_context(ctx)
        if rep >= warmup:
            for k in ("n_p_eval", "t_p_eval_ms", "n_eval", "t_eval_ms"):
                out[k].append(float(getattr(d, k)))
            out["wall_pp_s"].append(t1 - t0)
            out["wall_tg_s"].append(t2 - t1)
    lc.llama_free(ctx)
    lc.llama_model_free(model)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
