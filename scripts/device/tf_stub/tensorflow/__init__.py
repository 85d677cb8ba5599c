from _stub import module_getattr as __getattr__  # noqa: F401
