"""FLIP-27 on the JobManager: the source operator's coordinator and the context it gives split enumerators."""
