"""PyFlink's ``pyflink.datastream.time_domain`` module path (re-exports; see :mod:`strom.api.functions`)."""

from strom.api.functions import TimeDomain

__all__ = ["TimeDomain"]
