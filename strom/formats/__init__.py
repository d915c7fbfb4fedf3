"""File formats of the file connector (PyFlink's ``pyflink.datastream.formats``)."""
