"""The Table API and SQL (PyFlink's ``pyflink.table``) on strom's runtime."""
