import dataclasses
import types

from _stub import Stub
from _stub import module_getattr as __getattr__  # noqa: F401


@dataclasses.dataclass
class _BuilderConfig:
    name: str = ""


core = types.SimpleNamespace(
    BuilderConfig=_BuilderConfig, GeneratorBasedBuilder=Stub, Version=Stub, DatasetInfo=Stub
)
features = download = Stub
