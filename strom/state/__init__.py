"""The state processor API (Flink's ``org.apache.flink.state.api``, which PyFlink lacks): read, write and change
the state of savepoints — from a notebook as ``pyarrow`` tables, or as bounded DataStreams on strom's runtime.

    from strom.state import SavepointReader, SavepointWriter, OperatorTransformation

    counts = SavepointReader.read(env, savepoint_path).read_keyed_state_table("counts", CountReader())
    (SavepointWriter.new_savepoint(env, max_parallelism=128)
        .with_operator("counts", OperatorTransformation.bootstrap_with(frame).key_by(lambda r: r["key"])
                       .transform(CountBootstrapper()))
        .write(new_path))

``docs/state_processor.md`` is the guide. (Not to be confused with :mod:`strom.api.state`, the state descriptors
a job uses, nor with :mod:`strom.runtime.state`, the state backends.)
"""

from strom.state.functions import (
    BroadcastStateBootstrapFunction,
    KeyedStateBootstrapFunction,
    KeyedStateReaderFunction,
    StateBootstrapFunction,
)
from strom.state.operator_identifier import OperatorIdentifier
from strom.state.operator_transformation import (
    KeyedOperatorTransformation,
    OneInputOperatorTransformation,
    OperatorTransformation,
    StateBootstrapTransformation,
)
from strom.state.savepoint_reader import SavepointReader
from strom.state.savepoint_writer import SavepointWriter

__all__ = [
    "BroadcastStateBootstrapFunction",
    "KeyedOperatorTransformation",
    "KeyedStateBootstrapFunction",
    "KeyedStateReaderFunction",
    "OneInputOperatorTransformation",
    "OperatorIdentifier",
    "OperatorTransformation",
    "SavepointReader",
    "SavepointWriter",
    "StateBootstrapFunction",
    "StateBootstrapTransformation",
]
