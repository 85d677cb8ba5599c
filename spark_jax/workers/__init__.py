"""Worker processes: one supervisor for every child process spark_jax runs code in.

  frames      4-byte length + UTF-8 JSON frames over pipes (both sides)
  supervisor  `ChildProcess`: spawn, frames, RSS cap, process-group kill, and one
              classification of failures ('timeout', 'memory', 'signal', 'error')
  child       `serve`: the child's request loop on private frame pipes

Used by the feasibility sandbox and the evaluation workers, which map the classification
onto their own failure types. May import only `util`.
"""

from spark_jax.workers.child import Send, serve
from spark_jax.workers.frames import (
    HEADER,
    FrameEOF,
    FrameTimeout,
    FrameTooLarge,
    encode_frame,
    read_frame,
    read_frame_from,
    write_all,
    write_frame,
)
from spark_jax.workers.supervisor import (
    KINDS,
    MEMORY_MARKERS,
    PARENT_DEATH_FD_VAR,
    ChildFailed,
    ChildProcess,
    Failure,
    MemoryCap,
    classify_exit,
    is_memory_error,
    mentions_memory,
    python_env,
    register_secret_env,
    rss_bytes,
    scrubbed_env,
    signal_name,
)

__all__ = [
    "HEADER",
    "KINDS",
    "MEMORY_MARKERS",
    "PARENT_DEATH_FD_VAR",
    "ChildFailed",
    "ChildProcess",
    "Failure",
    "FrameEOF",
    "FrameTimeout",
    "FrameTooLarge",
    "MemoryCap",
    "Send",
    "classify_exit",
    "encode_frame",
    "is_memory_error",
    "mentions_memory",
    "python_env",
    "read_frame",
    "read_frame_from",
    "register_secret_env",
    "rss_bytes",
    "scrubbed_env",
    "serve",
    "signal_name",
    "write_all",
    "write_frame",
]
