"""A standalone session cluster: ``strom jobmanager``, ``strom taskmanager`` and ``strom cluster`` (Flink's
standalone deployment), and the client side of job submission over REST (:mod:`rest_client`, :mod:`job_files`)."""
