"""Program graphs: StreamGraph (operators), JobGraph (chained tasks), ExecutionGraph lives in the JobMaster."""
