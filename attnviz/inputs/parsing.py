"""Read a matrix of numbers that a user typed, pasted or uploaded.

Shapes: one matrix is `(R, C)` with R rows (usually tokens) and C columns (usually features); a
batch, allowed only from JSON or .npy, is `(B, R, C)`. Every entry point returns finite float64
numbers checked by `core.checks.as_float_array` and within the limits of `core.limits` (any
number of rows and columns the text or file can hold; a page passes its own `max_shape`), and
rejects bad input with a plain-text `ValueError` that names the input, says where the problem is
(1-based row and column, rows counted as the user's lines) and how to fix it.

Text is read as one row of numbers per line, unless it starts with "[": then it is JSON (read
with `json.loads`, never `eval`); if that fails it is read as rows with the brackets of a numpy
printout stripped. The minus sign U+2212 and full-width digits are read as ASCII; zero-width
characters are deleted (so the numbers read are the ones the user sees); text-direction marks
and HTML are rejected.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
import re
from typing import Any

import numpy as np

from attnviz.core.checks import as_float_array, describe
from attnviz.core.limits import MAX_BATCH, MAX_TEXT_CHARS, MAX_UPLOAD_BYTES

ALLOWED_EXTENSIONS = (".csv", ".json", ".npy", ".tsv", ".txt")  # file types `load_matrix` reads
_ECHO_CHARS = 30  # most characters of user text quoted back in an error message
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s,;]+")  # any mix of whitespace, commas and semicolons
_TRAILING = re.compile(r"[\s\],;]+$")  # closing brackets and commas of a pasted row
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # text-direction marks
_MARKUP = re.compile("[<>]")
_FULL_WIDTH = "０１２３４５６７８９．，；＋－ｅＥ"  # read as the ASCII "0123456789.,;+-eE"
_NORMALIZE = str.maketrans(
    {"\u2212": "-"}  # minus sign
    | dict(zip(_FULL_WIDTH, "0123456789.,;+-eE", strict=True))
    | dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff")  # invisible: deleted
)
_EXAMPLE = "e.g. 1 2 3 on the first line and 4 5 6 on the second"
_JSON_EXAMPLE = "e.g. [[1, 2], [3, 4]]"
_NUMBER_HINT = "Write digits with an optional sign, decimal point and exponent, e.g. -2.5 or 1e-3."
_ELLIPSIS_HINT = (
    "numpy shortened its printout with '...'; print the whole array after "
    "np.set_printoptions(threshold=sys.maxsize)."
)


class _JsonSyntaxError(ValueError):
    """The text is not valid JSON (as opposed to valid JSON of the wrong shape)."""


class _JsonNumber(str):
    """A number as written in JSON, kept as text so messages can quote it."""


def parse_matrix_text(
    text: str, *, name: str = "matrix", max_shape: tuple[int, int] | None = None
) -> np.ndarray:
    """Parse a matrix typed or pasted into a text box.

    Rows are lines; numbers are separated by any mix of spaces, tabs, commas and semicolons, and
    blank lines are ignored. Rows may be wrapped in brackets (`[1, 2],`) as in numpy printouts.
    Text starting with "[" or "{" is read as JSON first: a list of rows, a list of matrices (a
    batch), or a flat list read as one row. If it is not valid JSON it is read as rows.

    Args:
        text: At most `MAX_TEXT_CHARS` characters.
        name: The input's name, used in error messages.
        max_shape: `(rows, columns)`: the most rows (tokens) and columns (features) of each
            matrix, as a page allows (`limits.APP_MAX_TOKENS`, `limits.APP_MAX_FEATURES`);
            None = any number the text holds.

    Returns:
        A finite float64 array of shape `(R, C)`, or `(B, R, C)` for a JSON batch.

    Raises:
        ValueError: if the text is not a matrix of finite numbers within the size limits.
    """
    _check_text(text, name)
    return _finish(_read_text(_clean(text, name), name), name, ndim=(2, 3), max_shape=max_shape)


def parse_json_text(
    text: str, *, name: str = "matrix", max_shape: tuple[int, int] | None = None
) -> np.ndarray:
    """Parse JSON nested lists: rows `(R, C)`, a batch `(B, R, C)`, or a flat list as one row.

    `name` and `max_shape` are as in `parse_matrix_text`.

    Raises:
        ValueError: for invalid JSON, anything but nested lists of numbers, or ragged lists.
    """
    _check_text(text, name)
    return _finish(_read_json(_clean(text, name), name), name, ndim=(2, 3), max_shape=max_shape)


def parse_csv_bytes(
    data: bytes, *, name: str = "matrix", max_shape: tuple[int, int] | None = None
) -> np.ndarray:
    """Parse a UTF-8 CSV file (with or without BOM) of numbers only, without a header row.

    The delimiter is a comma, or a semicolon or tab if the first row has no comma. Quoted numbers
    are read; blank cells are errors, blank lines are ignored. `name` and `max_shape` are as in
    `parse_matrix_text`.

    Returns:
        A finite float64 array of shape `(R, C)`.

    Raises:
        ValueError: for a header row, blank cells, non-numbers, ragged rows or a too large file.
    """
    text = _clean(_decode(data, name), name)
    array = _read_delimited(text, name, delimiter=None)
    return _finish(array, name, ndim=(2,), max_shape=max_shape)


def parse_npy_bytes(
    data: bytes, *, name: str = "matrix", max_shape: tuple[int, int] | None = None
) -> np.ndarray:
    """Load a `.npy` file of bool, integer or float numbers without unpickling anything.

    A 1-D array is read as one row `(1, C)`; 2-D is `(R, C)` and 3-D a batch `(B, R, C)`. The
    header is checked before any data is read, so a file cannot make us allocate more memory
    than its size. `name` and `max_shape` are as in `parse_matrix_text`.

    Raises:
        ValueError: for object, text, structured or complex dtypes, 0-D or more than 3-D arrays,
            arrays over the size limits, and damaged files.
    """
    data = _as_bytes(data, name)
    _check_upload(data, name)
    return _finish(_read_npy(data, name, max_shape), name, ndim=(2, 3), max_shape=max_shape)


def load_matrix(
    data: bytes, filename: str, *, name: str = "matrix", max_shape: tuple[int, int] | None = None
) -> np.ndarray:
    """Read an uploaded file, choosing the format by its extension (case-insensitive).

    `.csv` and `.tsv` are delimited rows, `.txt` is read like the text box, `.json` as JSON and
    `.npy` with `np.load(..., allow_pickle=False)`. Files may be up to `MAX_UPLOAD_BYTES` long.
    `name` and `max_shape` are as in `parse_matrix_text`.

    Returns:
        A finite float64 array of shape `(R, C)`, or `(B, R, C)` from JSON, text or .npy.

    Raises:
        ValueError: for an unknown extension, a too large or non-UTF-8 file, or bad contents.
    """
    extension = os.path.splitext(str(filename))[1].lower()
    if extension not in ALLOWED_EXTENSIONS:
        raise ValueError(
            f"`{name}` file {_echo(str(filename))} has an unsupported type. Allowed: "
            f"{', '.join(ALLOWED_EXTENSIONS)}. Save the matrix as CSV, or with np.save as .npy."
        )
    if extension == ".npy":
        return parse_npy_bytes(data, name=name, max_shape=max_shape)
    if extension == ".csv":
        return parse_csv_bytes(data, name=name, max_shape=max_shape)
    text = _clean(_decode(data, name), name)
    if extension == ".tsv":
        array = _read_delimited(text, name, delimiter="\t")
        return _finish(array, name, ndim=(2,), max_shape=max_shape)
    reader = _read_json if extension == ".json" else _read_text
    return _finish(reader(text, name), name, ndim=(2, 3), max_shape=max_shape)


# --- checks shared by the entry points ---------------------------------------------------------


def _finish(
    array: np.ndarray, name: str, *, ndim: tuple[int, ...], max_shape: tuple[int, int] | None
) -> np.ndarray:
    """Apply the size limits, then the shared finiteness, emptiness and magnitude checks."""
    _check_shape(array.shape, name, max_shape)
    return as_float_array(array, name, ndim=ndim)


def _check_shape(
    shape: tuple[int, ...], name: str, max_shape: tuple[int, int] | None = None
) -> None:
    """Reject more than `MAX_BATCH` matrices, and more rows or columns than `max_shape`
    (a page's limits; None = any number: the text and upload limits bound them)."""
    if len(shape) < 2:
        return
    *batch, rows, cols = shape
    if batch and batch[0] > MAX_BATCH:
        raise ValueError(
            f"`{name}` is a batch of {batch[0]:,} matrices; at most {MAX_BATCH:,} are allowed. "
            "Give fewer matrices."
        )
    if max_shape is None:
        return
    most_rows, most_cols = max_shape
    if rows > most_rows:
        raise ValueError(
            f"`{name}` has {rows:,} rows; at most {most_rows:,} are allowed (one row per "
            "token). Give fewer rows."
        )
    if cols > most_cols:
        raise ValueError(
            f"`{name}` has {cols:,} columns; at most {most_cols:,} are allowed (one column per "
            "feature). Give fewer columns."
        )


def _check_text(text: Any, name: str) -> None:
    """Reject anything but a string of at most `MAX_TEXT_CHARS` characters."""
    if not isinstance(text, str):
        raise ValueError(f"`{name}` must be text. Received: {describe(text)}.")
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(
            f"`{name}` is too long: {len(text):,} characters; at most {MAX_TEXT_CHARS:,} are "
            "allowed. Upload the matrix as a file instead (CSV, JSON or .npy)."
        )


def _as_bytes(data: Any, name: str) -> bytes:
    """Accept the contents of a file as bytes, bytearray or memoryview."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"`{name}` must be the bytes of a file. Received: {describe(data)}.")
    return bytes(data)


def _check_upload(data: bytes, name: str) -> None:
    """Reject files over `MAX_UPLOAD_BYTES`."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(
            f"`{name}` file is too large: {len(data):,} bytes; at most {MAX_UPLOAD_BYTES:,} bytes "
            f"({MAX_UPLOAD_BYTES / 2**20:.0f} MB) are allowed. Upload a smaller matrix, or save "
            "it as .npy, which is smaller than CSV or JSON."
        )


def _decode(data: Any, name: str) -> str:
    """Decode an uploaded text file as UTF-8, dropping a byte order mark."""
    data = _as_bytes(data, name)
    _check_upload(data, name)
    hint = 'Save the file as UTF-8 (e.g. "CSV UTF-8" in Excel) and upload it again.'
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise ValueError(f"`{name}` file is UTF-16 text, not UTF-8. {hint}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"`{name}` file is not UTF-8 text: byte 0x{data[err.start]:02x} at position "
            f"{err.start:,} cannot be read. {hint}"
        ) from None


def _clean(text: str, name: str) -> str:
    """Read look-alike characters as ASCII, delete invisible ones, reject marks and markup."""
    text = text.translate(_NORMALIZE)
    if found := _BIDI.search(text):
        raise ValueError(
            f"`{name}`, row {_line_of(text, found.start())} contains an invisible text-direction "
            f"mark (U+{ord(found.group()):04X}), which can show numbers in a different order "
            "than they are read. Delete it, e.g. by typing the row again."
        )
    if found := _MARKUP.search(text):
        raise ValueError(
            f"`{name}`, row {_line_of(text, found.start())} contains HTML or other markup (the "
            "characters < or >), not plain numbers. Paste the numbers as plain text."
        )
    return text


def _line_of(text: str, position: int) -> int:
    """The 1-based line number of `text[position]`, counting lines like `str.splitlines`."""
    return len(text[: position + 1].splitlines())


def _echo(text: str) -> str:
    """Quote user text in a message: at most `_ECHO_CHARS` characters, invisibles escaped."""
    shown = text if len(text) <= _ECHO_CHARS else text[:_ECHO_CHARS] + "..."
    return repr(shown).replace("<", "\\x3c").replace(">", "\\x3e")


def _empty_error(name: str) -> ValueError:
    return ValueError(f"`{name}` is empty. Type one row of numbers per line, {_EXAMPLE}.")


def _count(n: int) -> str:
    return f"{n} number" if n == 1 else f"{n} numbers"


# --- rows of numbers ---------------------------------------------------------------------------


def _read_text(text: str, name: str) -> np.ndarray:
    """Read text box contents: JSON if it starts with "[" or "{" and parses, otherwise rows."""
    if not text.lstrip().startswith(("[", "{")):
        return _read_rows(text, name)
    try:
        return _read_json(text, name)
    except _JsonSyntaxError as json_error:
        try:
            return _read_rows(text, name)
        except ValueError as rows_error:  # commas suggest JSON; numpy printouts have none
            raise (json_error if "," in text else rows_error) from None


def _read_rows(text: str, name: str) -> np.ndarray:
    """Split lines into cells on whitespace, commas and semicolons."""
    rows: list[tuple[int, list[str]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        body = _strip_brackets(line, number, name, first=not rows)
        cells = [cell for cell in _SEPARATORS.split(body) if cell]
        if cells:
            rows.append((number, cells))
    return _cells_to_array(rows, name)


def _strip_brackets(line: str, number: int, name: str, *, first: bool) -> str:
    """Strip the brackets around a pasted row: `[[1. 2.]` or ` [3. 4.]],` (numpy printouts)."""
    body = line.strip()
    opened = len(body) - len(body.lstrip("["))
    if opened > (2 if first else 1):
        raise ValueError(
            f"`{name}`, row {number} starts with {opened} brackets, like a printout of a 3-D "
            "array. Give a batch as JSON, e.g. [[[1, 2]], [[3, 4]]], or one matrix as rows."
        )
    return _TRAILING.sub("", body[opened:])


def _read_delimited(text: str, name: str, *, delimiter: str | None) -> np.ndarray:
    """Read CSV or TSV rows with the `csv` module, so quoted cells work."""
    lines = text.splitlines()
    if delimiter is None:
        first = next((line for line in lines if line.strip()), "")
        delimiter = next((d for d in ",;\t" if d in first), ",")
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        for cells in reader:
            cells = [cell.strip() for cell in cells]
            if any(cells):
                rows.append((reader.line_num, cells))
    except csv.Error as err:
        raise ValueError(
            f"`{name}`, row {reader.line_num} could not be read as CSV ({err}). Check the "
            "quotes in that row, or remove them."
        ) from None
    return _cells_to_array(rows, name)


def _cells_to_array(rows: list[tuple[int, list[str]]], name: str) -> np.ndarray:
    """Convert `(line number, cells)` rows of equal length to a `(R, C)` array."""
    if not rows:
        raise _empty_error(name)
    first_number, first_cells = rows[0]
    width = len(first_cells)
    if len(rows) > 1 and _looks_like_header(first_cells):
        word = next(cell for cell in first_cells if _is_word(cell))
        raise ValueError(
            f"`{name}`: the first row looks like a header ({_echo(word)} is a word, not a "
            "number). Remove the header row so that every row holds only numbers."
        )
    _check_shape((len(rows), width), name)
    values = []
    for number, cells in rows:
        if len(cells) != width:
            raise ValueError(
                f"`{name}`, row {number} has {_count(len(cells))} but row {first_number} has "
                f"{width}. Give every row the same number of columns."
            )
        label = f"row {number}"
        values.append([_to_float(cell, name, label, col) for col, cell in enumerate(cells, 1)])
    return np.array(values, dtype=np.float64)


def _is_word(cell: str) -> bool:
    return any(char.isalpha() for char in cell) and not (
        _NUMBER.fullmatch(cell) or _NON_FINITE.fullmatch(cell)
    )


def _looks_like_header(cells: list[str]) -> bool:
    """No cell is a number and some are words (pandas' index header leaves the first blank)."""
    return any(_is_word(cell) for cell in cells) and not any(
        _NUMBER.fullmatch(cell) for cell in cells
    )


def _to_float(cell: str, name: str, row: str, col: int) -> float:
    """Read one cell; `row` is its label in messages, e.g. "row 2" or "matrix 1, row 2"."""
    if _NUMBER.fullmatch(cell):
        value = float(cell)
        if math.isfinite(value):
            return value
    raise _cell_error(cell, f"`{name}`, {row}, column {col}")


def _cell_error(cell: str, where: str) -> ValueError:
    """Say why a cell that is not a plain finite number was rejected."""
    if _NUMBER.fullmatch(cell) or _NON_FINITE.fullmatch(cell):
        return ValueError(
            f"{where}: {_echo(cell)} is not a finite number. Only finite numbers are allowed: "
            "replace NaN and infinity (and numbers beyond about 1.8e308) with ordinary values."
        )
    if not cell:
        return ValueError(f"{where} is blank. Fill in a number; cells may not be empty.")
    hint = _ELLIPSIS_HINT if cell == "..." else _NUMBER_HINT
    return ValueError(f"{where}: {_echo(cell)} is not a number. {hint}")


# --- JSON --------------------------------------------------------------------------------------


def _read_json(text: str, name: str) -> np.ndarray:
    """Read JSON nested lists; numbers are kept as text until `_to_float` checks them."""
    if not text.strip():
        raise _empty_error(name)
    try:
        value = json.loads(
            text, parse_float=_JsonNumber, parse_int=_JsonNumber, parse_constant=_JsonNumber
        )
    except json.JSONDecodeError as err:
        raise _JsonSyntaxError(
            f"`{name}` is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}. "
            f"Write a list of rows, {_JSON_EXAMPLE}, or one row of numbers per line."
        ) from None
    except RecursionError:
        raise ValueError(
            f"`{name}` has too many nested brackets to read. Write a list of rows, {_JSON_EXAMPLE}."
        ) from None
    return _json_to_array(value, name)


def _json_to_array(value: Any, name: str) -> np.ndarray:
    """Check parsed JSON is a flat list (one row), a list of rows or a list of matrices."""
    if not isinstance(value, list):
        raise ValueError(
            f"`{name}` must be a JSON list of rows, {_JSON_EXAMPLE}. Received {_json_kind(value)}."
        )
    if not value:
        raise _empty_error(name)
    depth, item = 0, value
    while isinstance(item, list):  # follow the first items down: [[[...]]] -> 3
        depth, item = depth + 1, (item[0] if item else None)
    if depth == 1:
        return np.array(_json_matrix([value], name, ""), dtype=np.float64)  # (1, C)
    if depth == 2:
        return np.array(_json_matrix(value, name, ""), dtype=np.float64)  # (R, C)
    if depth == 3:
        return _json_batch(value, name)  # (B, R, C)
    raise ValueError(
        f"`{name}` has {depth} levels of nested lists; at most 3 are allowed: a list of rows "
        f"({_JSON_EXAMPLE}) or a list of such matrices (a batch)."
    )


def _json_batch(value: list[Any], name: str) -> np.ndarray:
    """Stack JSON matrices of the same shape into `(B, R, C)`."""
    matrices = [_json_matrix(item, name, f"matrix {b}, ") for b, item in enumerate(value, 1)]
    shapes = [(len(m), len(m[0]) if m else 0) for m in matrices]
    for b, shape in enumerate(shapes, 1):
        if shape != shapes[0]:
            raise ValueError(
                f"`{name}`, matrix {b} has shape {shape[0]} × {shape[1]} but matrix 1 has "
                f"{shapes[0][0]} × {shapes[0][1]}. Give every matrix in the batch the same "
                "number of rows and columns."
            )
    return np.array(matrices, dtype=np.float64)


def _json_matrix(rows: Any, name: str, prefix: str) -> list[list[float]]:
    """Convert a JSON list of equally long rows of numbers; `prefix` locates it in a batch."""
    if not isinstance(rows, list):
        raise ValueError(
            f"`{name}`, {prefix.rstrip(', ')} is {_json_kind(rows)}, not a list of rows. "
            f"Write each matrix as a list of rows, {_JSON_EXAMPLE}."
        )
    values = []
    for r, row in enumerate(rows, 1):
        if not isinstance(row, list):
            raise ValueError(
                f"`{name}`, {prefix}row {r} is {_json_kind(row)}, not a list of numbers. Write "
                f"every row in brackets, {_JSON_EXAMPLE}."
            )
        if len(row) != len(rows[0]):
            raise ValueError(
                f"`{name}`, {prefix}row {r} has {_count(len(row))} but {prefix}row 1 has "
                f"{len(rows[0])}. Give every row the same number of columns."
            )
        values.append([_json_number(v, name, f"{prefix}row {r}", c) for c, v in enumerate(row, 1)])
    return values


def _json_number(value: Any, name: str, row: str, col: int) -> float:
    if isinstance(value, _JsonNumber):
        return _to_float(value, name, row, col)
    raise ValueError(
        f"`{name}`, {row}, column {col}: {_json_kind(value)} is not a number. Write plain "
        f"numbers without quotes, {_JSON_EXAMPLE}."
    )


def _json_kind(value: Any) -> str:
    """Describe a parsed JSON value in the user's terms."""
    if isinstance(value, _JsonNumber):
        return f"the single number {_echo(value)}"
    if isinstance(value, str):
        return f"the text {_echo(value)}"
    if isinstance(value, bool):
        return "true" if value else "false"
    return {type(None): "null", dict: "an object", list: "a list"}.get(type(value), "a value")


# --- .npy --------------------------------------------------------------------------------------


def _read_npy(data: bytes, name: str, max_shape: tuple[int, int] | None) -> np.ndarray:
    """Check the .npy header (dtype, shape, data length) before loading the array."""
    stream = io.BytesIO(data)
    shape, dtype = _read_npy_header(stream, data, name)
    _check_npy_dtype(dtype, name)
    if len(shape) not in (1, 2, 3):
        raise ValueError(
            f"`{name}` in the .npy file must be 1-D (one row), 2-D (rows × columns) or 3-D (a "
            f"batch). Received shape {shape}. Save it with np.save(file, array) of those ranks."
        )
    _check_shape((1, *shape) if len(shape) == 1 else shape, name, max_shape)
    expected, received = math.prod(shape) * dtype.itemsize, len(data) - stream.tell()
    if expected > received:
        raise ValueError(
            f"`{name}` .npy file is cut short: shape {shape} needs {expected:,} bytes of data "
            f"but the file has {received:,}. Save it again with np.save(file, array)."
        )
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as err:  # the header was checked, so this is a damaged file
        if "allow_pickle" in str(err):
            raise _object_error(name) from None
        raise _damaged_error(name, data) from None
    return array.reshape(1, -1) if array.ndim == 1 else array  # (C,) -> (1, C)


def _read_npy_header(stream: io.BytesIO, data: bytes, name: str) -> tuple[tuple, np.dtype]:
    """Read the magic string and header of a .npy file (format versions 1.0 and 2.0)."""
    fmt = np.lib.format
    readers = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}
    try:
        shape, _, dtype = readers[fmt.read_magic(stream)](stream)
    except Exception:  # a damaged header raises ValueError, KeyError, tokenize.TokenError, ...
        raise _damaged_error(name, data) from None
    if any(not isinstance(size, int) or size < 0 for size in shape):
        raise _damaged_error(name, data)
    return tuple(shape), dtype


def _check_npy_dtype(dtype: np.dtype, name: str) -> None:
    """Allow bool, integer and float dtypes only."""
    if dtype.hasobject:
        raise _object_error(name)
    if dtype.kind not in "biuf":
        kinds = {"U": "text", "S": "bytes", "V": "records", "c": "complex numbers"}
        raise ValueError(
            f"`{name}` in the .npy file must hold real numbers (bool, integer or float). "
            f"Received dtype {dtype.name} ({kinds.get(dtype.kind, 'not plain numbers')}). Save "
            "a numeric array, e.g. np.save(file, array.astype(np.float64))."
        )


def _object_error(name: str) -> ValueError:
    return ValueError(
        f"`{name}` in the .npy file holds Python objects (dtype object), which are not loaded "
        "because unpickling can run code. Save a numeric array, e.g. "
        "np.save(file, np.asarray(array, dtype=np.float64))."
    )


def _damaged_error(name: str, data: bytes) -> ValueError:
    if data.startswith(b"PK"):
        return ValueError(
            f"`{name}` file is a .npz archive, not a .npy file. Save one array with "
            "np.save(file, array) and upload that file."
        )
    return ValueError(
        f"`{name}` is not a readable .npy file: its header is missing, damaged or of an "
        "unsupported version. Save the array with np.save(file, array) and upload that file."
    )
