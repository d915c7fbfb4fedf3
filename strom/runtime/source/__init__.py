"""FLIP-27 on the JobManager: the source operator's coordinator and its split enumerators."""
