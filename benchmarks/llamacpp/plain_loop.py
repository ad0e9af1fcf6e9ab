"""llama-bench's loop (its test_prompt + test_gen, one sequence) on llama.cpp's C API only, run as its own process
(``python -m benchmarks.llamacpp.plain_loop GGUF N_CTX N_BATCH THREADS PROMPT GEN REPS WARMUP SEED``): one JSON line
with llama.cpp's counters (``llama_perf_context``) and the wall clock of every timed repetition. Imports nothing of
edgeopt: it is the reference edgeopt's numbers are judged against. :class:`PlainLoop` is the loop itself, also run
beside edgeopt's token loop in one process (:mod:`.same_process`)."""

import json
import logging
import sys
import time

import llama_cpp as lc
import numpy as np


class PlainLoop:
    """One llama.cpp context on ``path`` with llama-bench's settings (no flash attention, perf counters on)."""

    def __init__(self, path: str, n_ctx: int, n_batch: int, threads: int) -> None:
        logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)  # llama.cpp's log: errors only (as the agent)
        lc.llama_backend_init()
        mp = lc.llama_model_default_params()
        mp.n_gpu_layers = 0
        self.model = lc.llama_model_load_from_file(path.encode(), mp)
        cp = lc.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch = n_ctx, n_batch, n_batch
        cp.n_threads = cp.n_threads_batch = threads
        cp.flash_attn_type = lc.LLAMA_FLASH_ATTN_TYPE_DISABLED
        cp.no_perf = False
        self.ctx = lc.llama_init_from_model(self.model, cp)
        self.n_batch = n_batch
        self.n_vocab = lc.llama_vocab_n_tokens(lc.llama_model_get_vocab(self.model))
        self.mem = lc.llama_get_memory(self.ctx)

    def _decode(self, ids: list) -> None:
        arr = (lc.llama_token * len(ids))(*ids)
        rc = lc.llama_decode(self.ctx, lc.llama_batch_get_one(arr, len(ids)))
        if rc != 0:
            raise SystemExit(f"llama_decode returned {rc}")

    def rep(self, prompt: list, gen_len: int, rng: np.random.Generator) -> dict:
        """One repetition: the prompt, then ``gen_len - 1`` decodes of random tokens (drawn before the clock starts),
        each synchronized; the wall clock of both phases and llama.cpp's counters."""
        ids = [int(t) for t in rng.integers(2, self.n_vocab, size=max(gen_len - 1, 0))]  # drawn before the clock
        one = (lc.llama_token * 1)()
        batch = lc.llama_batch_get_one(one, 1)  # built once, as llama-bench's C++ loop costs nothing per token
        ctx, decode, sync = self.ctx, lc.llama_decode, lc.llama_synchronize
        lc.llama_memory_clear(self.mem, True)
        lc.llama_perf_context_reset(ctx)
        t0 = time.perf_counter()
        for i in range(0, len(prompt), self.n_batch):
            self._decode(prompt[i:i + self.n_batch])
        sync(ctx)
        t1 = time.perf_counter()
        for token in ids:
            one[0] = token
            if decode(ctx, batch) != 0:
                raise SystemExit("llama_decode failed in the generation")
            sync(ctx)
        t2 = time.perf_counter()
        d = lc.llama_perf_context(self.ctx)
        return {"wall_pp_s": t1 - t0, "wall_tg_s": t2 - t1,
                **{k: float(getattr(d, k)) for k in ("n_p_eval", "t_p_eval_ms", "n_eval", "t_eval_ms")}}

    def close(self) -> None:
        lc.llama_free(self.ctx)
        lc.llama_model_free(self.model)


def main(argv: list) -> None:
    path = argv[0]
    n_ctx, n_batch, threads, prompt_len, gen_len, reps, warmup, seed = map(int, argv[1:9])
    loop = PlainLoop(path, n_ctx, n_batch, threads)
    out = {"n_p_eval": [], "t_p_eval_ms": [], "n_eval": [], "t_eval_ms": [], "wall_pp_s": [], "wall_tg_s": [],
           "threads": lc.llama_n_threads(loop.ctx), "n_ctx": lc.llama_n_ctx(loop.ctx),
           "system_info": lc.llama_print_system_info().decode(errors="replace")}
    rng = np.random.default_rng(seed)
    for rep in range(warmup + reps):
        prompt = [int(t) for t in rng.integers(2, loop.n_vocab, size=prompt_len)]
        row = loop.rep(prompt, gen_len, rng)
        if rep >= warmup:
            for k, v in row.items():
                out[k].append(v)
    loop.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
