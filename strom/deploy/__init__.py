"""Deployments: the embedded MiniCluster (standalone and Spark come later)."""
