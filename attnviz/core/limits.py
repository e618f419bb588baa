"""Documented size limits for every public entry point and every page.

The app and the package share these numbers so that the limits users read in error messages,
the docs (docs/app.md) and the UI are always the same ones the code enforces. `MAX_` names are the
package's: its maths takes any number of tokens, features and heads (any head size Dk
independent of D), stopping only where memory would (`MAX_SCORE_CELLS`, `MAX_ARRAY_CELLS`).
`APP_` names are the pages' own, smaller limits for what a page can draw and run at once; the
pages' inputs take their largest values from here, pass them to the parsers and say them.
Drawing sizes (pixels, ticks) are not limits and live with the figures.
"""

# Memory: what the maths takes. Every token count and feature size is limited only by these
MAX_ARRAY_CELLS = 2**28  # most numbers in any one array, 1 GiB of float32 (B·T·D, H·D·Dk, …)
MAX_SCORE_CELLS = MAX_ARRAY_CELLS  # most B·H·T·S attention cells across the whole batch: each
# (B, H, T, S) stage (scores, weights, …) is one array of them

# Attention inputs (compute_attention, the parsers)
MAX_BATCH = 1024  # most sequences B in one batch
MAX_TEXT_CHARS = 1_000_000  # most characters of matrix text the parser reads
MAX_UPLOAD_BYTES = 20 * 1024 * 1024  # most bytes of one uploaded CSV / JSON / .npy file
MATRIX_FILE_TYPES = ("csv", "tsv", "txt", "json", "npy")  # file endings a matrix upload may have
MAX_SENTENCE_CHARS = 20_000  # most characters in one sentence
MAX_SENTENCES = 64  # most sentences encoded together
MAX_ABS_VALUE = 1e15  # largest magnitude of any input number: keeps float32 dot products
# finite (|q·k| <= MAX_ARRAY_CELLS features × MAX_ABS_VALUE² ≈ 2.7e38 < float32's 3.4e38)
MAX_SEED = 2**32 - 1  # largest accepted `seed` (numpy's seed range)

# What a page computes and draws at once (the explorer, the sentence pages, the controls)
APP_MAX_TOKENS = 4096  # most queries T or keys S of one matrix a page takes (rows of Q, K, V)
APP_MAX_FEATURES = 1024  # most features Dq, Dk, Dv or d_model a page's inputs take
APP_SCORE_CELLS = APP_MAX_TOKENS**2  # most B·H·T·S attention cells a page computes at once
APP_INPUT_CELLS = APP_MAX_TOKENS * APP_MAX_FEATURES  # most numbers per array a page encodes

# Multi-head attention and the decoder stack. The maths takes any number of heads and any
# head size Dk independent of D (H·Dk need not be D): it stops only where memory would, at
# MAX_SCORE_CELLS for the (B·H·T·S) weights and MAX_ARRAY_CELLS for any other array. The
# decoder stack of the Keras tutorial keeps its own sizes (layers, feed-forward, vocabulary)
MAX_LAYERS = 12  # most decoder layers N of the decoder stack
MAX_D_FF = 4096  # most feed-forward units of a decoder layer
MAX_VOCAB = 4096  # most token ids of the decoder's vocabulary
MAX_DECODER_TOKENS = 4096  # most B·T target (and B·S source) tokens in one decoder run
APP_DECODER_BATCH = 64  # most sequences the Decoder page runs at once (a few s of CPU)
APP_DECODER_SIDE = 64  # most target or source tokens on the Decoder page
APP_HEADS = 16  # most heads H a page draws, one matrix each (Decoder, Three ways, ALiBi inputs)

# Trained models (attnviz.learn)
MAX_UNITS = 256  # most units E, U or A of a seq2seq network
MAX_TRAINED_LAYERS = 6  # most encoder (and decoder) layers of a trained Transformer
MAX_TRAINED_D_MODEL = 256  # most model features of a trained Transformer
MAX_TRAINED_HEADS = 16  # most attention heads of a trained Transformer (or seq2seq network)
MAX_EPOCHS = 200  # most epochs one training run may ask for
MAX_TRAIN_PAIRS = 200_000  # most training (or validation) pairs of one run
MAX_TRAIN_BATCH = 4096  # most pairs per gradient step
MAX_PAIRS = 1_000_000  # most pairs one `make_pairs` call draws
MAX_LM_TOKENS = 512  # most tokens a language model reads at once (a text, a generation)

# Training in the app (one run per server at a time, so every session's share is small)
APP_MAX_EPOCHS = 30  # most epochs of a run started from the Learn page
APP_TIME_LIMIT = 90.0  # seconds of training at most per run started from the Learn page
APP_TRAIN_PAIRS = (500, 1_000, 2_000, 5_000, 10_000, 20_000)  # pairs a Learn run may draw

# Attention as today's models compute it (positions, packed documents, tiles)
MAX_ROPE_THETA = 1e9  # largest RoPE base θ (Llama 3 uses 5e5, long-context models up to ~1e7)
MAX_POSITION = 1e6  # largest magnitude of a token position given to RoPE or ALiBi
MAX_TILE_STEPS = 4096  # most (query tile, key tile) steps one tiled run records

# Your own model in the app (`attnviz view MODEL`)
MAX_VIEW_TOKENS = 256  # most tokens a typed text (or list of ids) may make for the chosen model
