"""Documented size limits for every public entry point.

The app and the package share these numbers so that the limits users read in error messages,
the README and the UI are always the same ones the code enforces.
"""

MAX_TOKENS = 4096  # most queries T or keys S in one attention matrix
MAX_FEATURES = 1024  # most features Dq, Dk, Dv (and concat units U)
MAX_BATCH = 1024  # most sequences B in one batch
MAX_SCORE_CELLS = MAX_TOKENS * MAX_TOKENS  # most B*T*S cells across the whole batch
MAX_INPUT_CELLS = MAX_TOKENS * MAX_FEATURES  # most numbers in one Q, K or V matrix (per batch item)
MAX_TEXT_CHARS = 1_000_000  # most characters of matrix text the parser reads
MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # most bytes of one uploaded CSV / JSON / .npy file
MAX_SENTENCE_CHARS = 20_000  # most characters in one sentence
MAX_SENTENCES = 64  # most sentences encoded together
MAX_ABS_VALUE = 1e15  # largest magnitude of any input number (keeps float32 scores finite)
MAX_HEADS = 16  # most attention heads H
MAX_LAYERS = 12  # most decoder layers N
MAX_D_FF = 4 * MAX_FEATURES  # most feed-forward units of a decoder layer
MAX_VOCAB = MAX_TOKENS  # most token ids of the decoder's vocabulary
MAX_DECODER_TOKENS = MAX_TOKENS  # most B·T target (and B·S source) tokens in one decoder run
MAX_SEED = 2**32 - 1  # largest accepted `seed` (numpy's seed range)
MAX_ROPE_THETA = 1e9  # largest RoPE base θ (Llama 3 uses 5e5, long-context models up to ~1e7)
MAX_POSITION = 1e6  # largest magnitude of a token position given to RoPE or ALiBi
MAX_DOCUMENTS = MAX_TOKENS  # most packed documents in one sequence
MAX_TILE = MAX_TOKENS  # largest query or key tile of tiled attention
MAX_TILE_STEPS = 4096  # most (query tile, key tile) steps one tiled run records
