"""PyFlink's ``pyflink.common.serializer`` module path (re-exports; see :mod:`strom.api.type_serializer`)."""

from strom.api.type_serializer import TypeSerializer, VoidNamespaceSerializer

__all__ = ["TypeSerializer", "VoidNamespaceSerializer"]
