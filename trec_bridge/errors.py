"""One exception hierarchy with stable error codes.

Errors are raised deep (readers, loaders, scorer) and turned into a message and
an exit code only at the CLI edge, so library callers can test for a code
instead of parsing text.  Every code lives in ``ERROR_CODES`` with a one-line
meaning; docs/errors.md is the human-readable copy of that table.
"""
from __future__ import annotations

from dataclasses import dataclass

from .messages import message_text, quote

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_INCOMPLETE = 2
EXIT_UNEXPLAINED = 3
EXIT_GATE_FAILED = 4
EXIT_UNREPRODUCED = 5  # explain: no combination of the axes reproduces their figures
EXIT_UNCONTROLLED = 6  # compare --single-variable: the systems differ in more than one key
EXIT_CLUSTER = 7  # --dask: the cluster could not be reached, or a task failed there past Dask's retries

# code -> meaning.  Grouped by where the problem is found.
ERROR_CODES: dict[str, str] = {
    # files
    "E_FILE_NOT_FOUND": "an input file does not exist",
    "E_FILE_IS_DIRECTORY": "an input path is a directory, not a file",
    "E_FILE_UNREADABLE": "an input file cannot be read (permissions, I/O error)",
    "E_FILE_EMPTY": "an input file has no content",
    "E_GZIP_CORRUPT": "a gzip file is truncated or corrupt",
    "E_ENCODING": "a file is not valid UTF-8",
    "E_BOM": "a file starts with a UTF-8 byte-order mark",
    "E_NUL_BYTE": "a file contains a NUL byte",
    "E_ID_INVISIBLE": "an ID holds an invisible character (zero-width, bidirectional control, U+FEFF) that makes "
                      "two different IDs look alike",
    "E_ID_TEXT": "an ID given in Python or in a Parquet or Arrow column that is empty or holds whitespace or a control "
                 "character (the ID rule of the JSON and TREC files)",
    "E_ID_COLLISION": "integer IDs read as decimal text (Python API, Parquet or Arrow columns) would meet other spellings of the same number "
                      "(7 and \"007\", or 7 and \"7\" as distinct keys)",
    "E_COLUMNAR": "a Parquet or Arrow IPC input cannot be read or lacks ir_measures' columns (query_id, doc_id, "
                  "score / relevance)",
    "E_TOO_LARGE": "an input file would need more memory than the process may use",
    # TREC lines
    "E_TREC_COLUMNS": "a TREC line has the wrong number of columns",
    "E_TREC_BLANK_LINE": "a blank line in a TREC qrels file",
    "E_RUN_SCORE": "a run score that is not a finite decimal number",
    "E_RUN_RANK": "a run rank that is not a non-negative integer, where the rank column orders the run (--order rank)",
    "E_RUN_DUPLICATE_DOC": "the same document twice in one query's ranking",
    "E_RUN_DUPLICATE_QUERY": "two records for the same query in a run",
    "E_RUN_QUERY_CONFLICT": "a query is both failed and ranked in a run",
    "E_RUN_TIMING": "per-query timing for a query the run has no ranking or failure for, or a requested_at that is "
                    "not an RFC 3339 date-time with its offset",
    "E_QRELS_GRADE": "a relevance grade that is not an integer",
    "E_QRELS_DUPLICATE": "the same (query, document) judged twice (in a diversity qrels: the same (query, subtopic, "
                         "document))",
    "E_SUBTOPICS_UNDECLARED": "a diversity measure (alpha_nDCG, ERR_IA, NRBP, P_IA, StRecall) on qrels not declared "
                              "a diversity qrels (--subtopics, or a dataset's subtopic_judgments): an ordinary "
                              "qrels' second column is never read as a subtopic",
    "E_SUBTOPICS_AMBIGUOUS": "a declared diversity qrels that cannot be one (the same subtopic on every line: an "
                             "iteration column), or an ordinary measure on a document it judges for several "
                             "subtopics (no single grade)",
    "E_GRADE_RANGE": "a relevance grade outside -1023..1023, the grades whose every gain a double holds",
    # JSON
    "E_JSON_SYNTAX": "a file is not valid JSON",
    "E_JSON_DUPLICATE_KEY": "a JSON object has the same key twice",
    "E_JSON_SCHEMA": "a JSON document does not match its schema",
    "E_JSON_FORMAT": "a JSON document names the wrong format or an unknown version",
    "E_JSON_TOO_DEEP": "a JSON document is nested too deeply",
    "E_JSON_NUMBER": "a JSON number is out of range or not finite",
    # dataset semantics
    "E_DATASET_GRADE_SCALE": "a grade outside the grades the dataset declares",
    "E_DATASET_UNKNOWN_QUERY": "judgments for a query the dataset does not list",
    "E_DATASET_UNKNOWN_DOC": "a judged document outside the listed corpus",
    "E_DATASET_NOT_EXHAUSTIVE": "exhaustive judgments miss a (query, document) pair",
    "E_DATASET_ANSWERABLE": "a query's answerable flag contradicts its judgments",
    "E_DATASET_DUPLICATE_QUERY": "a query ID listed twice in a dataset",
    "E_DATASET_THRESHOLD": "a relevance threshold below 1 or above the highest declared grade",
    "E_QUERY_SET_EMPTY": "no query is left after selecting the split",
    "E_QUERY_FILE": "a query-ID file is malformed",
    "E_ZSCORES": "a trec_eval -Z z-scores file with a line that is not 'qid measure mean stddev', two lines for one "
                 "query and measure, or a mean or deviation that is not finite",
    # run against dataset
    "E_RUN_UNKNOWN_QUERY": "a run query outside the selected query set",
    "E_RUN_UNKNOWN_DOC": "a run document outside the listed corpus",
    "E_RUN_DATASET_MISMATCH": "a run made for another dataset or dataset version",
    "E_RUN_QUERY_SPLIT": "a query's rows are in two partitions of a Dask DataFrame run (each query must be whole in "
                         "one partition to be scored where the partitions are)",
    # chunk maps
    "E_CHUNK_DUPLICATE": "the same chunk twice in one query's ranking",
    "E_CHUNK_UNKNOWN": "a ranked chunk that the chunk map does not list",
    "E_CHUNK_MAP_DOC": "a chunk-map entry that points outside the corpus",
    "E_CHUNK_MAP_DUPLICATE": "a chunk listed twice in a chunk map",
    # measures
    "E_MEASURE_SYNTAX": "a measure string that cannot be parsed",
    "E_MEASURE_UNKNOWN": "a measure name that is not supported",
    "E_MEASURE_PARAM": "a measure parameter that is unknown or of the wrong type",
    "E_CUTOFF": "a cutoff k that is not a positive integer",
    "E_GRADE_SCALE": "a judgment graded above the max_rel a graded measure was given (ERR, SDCG, NERR*, INST, INSQ)",
    "E_GAIN_OVERFLOW": "nDCG gains whose sum or ratio overflows a double (exponential gain of high grades, huge gains= values)",
    "E_THEIRS_FORMAT": "figures given to explain (THEIRS) in no shape it reads: trec_eval or ir_measures output, "
                       "a query/measure/value TSV, a JSON mapping, or name=value summary figures",
    "E_THEIRS_VALUE": "a value among the figures given to explain that is not a finite number",
    "E_THRESHOLDS": "an acceptance thresholds file (TOML) that is malformed or out of range",
    "E_REPEAT_PROTOCOL": "repeated runs of one system scored under different protocol fingerprints",
    "E_COMPARE_PROTOCOL": "two reports with different protocol fingerprints cannot be compared",
    "E_COMPARE_UNCONTROLLED": "compare --single-variable: the systems' test conditions differ in more than one key "
                              "(or are unknown), so the comparison is not a controlled one-variable comparison",
    "E_REPEAT_SYSTEM": "repeated runs whose system objects differ in keys not marked expected to vary (--vary)",
    "E_SYSTEM_FILE": "a --system-file that is not a JSON object or TOML table of JSON values",
    # score reports read back (compare)
    "E_REPORT_EXACT": "an exact fraction in a score report that does not parse, divides by zero or disagrees with its value",
    "E_REPORT_INCONSISTENT": "a score report whose parts contradict each other (rows without its measures, lists of other queries, counts)",
    # ir_datasets
    "E_IRDS_UNKNOWN": "an ir_datasets ID ir_datasets does not know",
    "E_IRDS_FILE_MISSING": "a file ir_datasets needs is not in its cache and downloads are off",
    # sidecar and outputs
    "E_SIDECAR": "a sidecar manifest that is malformed, has no SHA-256 of its TREC file, or does not fit its queries",
    "E_SIDECAR_MISMATCH": "a sidecar manifest whose SHA-256 is not its TREC file's (edited, or a write cut short)",
    "E_OUTPUT": "an output cannot be written (not a regular file, read-only, no folder, disk full, size limit, ...)",
    "E_OUTPUT_IS_INPUT": "an output names one of the command's inputs (same file or same resolved path)",
    "E_USAGE": "a command-line argument is invalid",
    "E_POLICY_UNKNOWN": "an unknown policy name",
    "E_POLICY_MEASURE": "a measure or parameter the tool a policy emulates does not compute so (refused, not approximated)",
    "E_REFERENCE_UNAVAILABLE": "a reference tool is not installed or refuses input it is known to mishandle",
    "E_REFERENCE_FAILED": "a reference tool crashed, was killed, ran out of memory or timed out on this input",
    # a Dask cluster (--dask, a distributed.Client)
    "E_DASK_UNAVAILABLE": "--dask or a Dask input without Dask installed (pip install 'trec-bridge[dask]')",
    "E_DASK": "the Dask cluster cannot be reached, or a task failed on it past Dask's retries (a worker lost, a "
              "worker without trec-bridge): nothing is scored or written",
    # installer
    "E_INSTALL_CHECKSUM": "a downloaded or given file does not match the sha256 the installer pins",
    "E_ARCHIVE_TOO_LARGE": "an archive member is larger than the installer reads",
}


@dataclass
class Location:
    """Where in the user's input the problem is; every field optional."""

    file: str | None = None
    line: int | None = None
    json_path: str | None = None
    query: str | None = None
    doc: str | None = None

    def describe(self) -> str:
        parts = []
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
            parts.append(where)
        if self.json_path is not None:
            parts.append(f"at {self.json_path}")
        if self.query is not None:
            parts.append(f"query {quote(self.query)}")
        if self.doc is not None:
            parts.append(f"document {quote(self.doc)}")
        return ", ".join(parts)


class TrecBridgeError(Exception):
    """Base of every error the tool reports to a user."""

    exit_code = EXIT_INVALID

    def __init__(self, code: str, message: str, **where):
        if code not in ERROR_CODES:
            raise ValueError(f"unregistered error code {code}")
        self.code = code
        self.message = message
        self.where = Location(**where)
        super().__init__(self.render())

    def __reduce__(self):
        """Picklable (a reference tool's error comes back from its child process, references/isolate.py)."""
        return _rebuild, (type(self), self.code, self.message, {k: v for k, v in vars(self.where).items() if v is not None})

    def render(self) -> str:
        """One line for a terminal: control characters escaped, quoted values and the whole bounded."""
        loc = self.where.describe()
        return message_text(f"[{self.code}] {loc + ': ' if loc else ''}{self.message}")

    def to_json(self) -> dict:
        out = {"code": self.code, "message": self.message}
        out.update({k: v for k, v in vars(self.where).items() if v is not None})
        return out


class InvalidInput(TrecBridgeError):
    """The user's input breaks the policy or its format: exit 1, nothing scored."""


class UsageError(TrecBridgeError):
    """A command-line or API argument is wrong: exit 1."""


class UncontrolledComparison(TrecBridgeError):
    """compare --single-variable refused systems differing in more than one key: exit 6 (a gate, not bad input)."""

    exit_code = EXIT_UNCONTROLLED


class ClusterFailed(TrecBridgeError):
    """The Dask cluster could not score the run (unreachable, a task lost past its retries): exit 7, no output."""

    exit_code = EXIT_CLUSTER


class ReferenceUnavailable(TrecBridgeError):
    """A reference tool (trec_eval binary, pytrec_eval, ...) cannot be used."""


class ReferenceFailed(ReferenceUnavailable):
    """A reference tool crashed, was killed, ran out of memory or timed out: its numbers do not exist.

    Never an unexplained difference (there is nothing to compare) and never
    fatal to trec-bridge: the tool runs in a child process (references/isolate.py).
    """


def _rebuild(cls, code: str, message: str, where: dict) -> TrecBridgeError:
    return cls(code, message, **where)
