"""The Table API and SQL (PyFlink's ``pyflink.table``): Flink's dynamic tables planned onto strom's DataStream runtime."""
