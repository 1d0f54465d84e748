"""Importers of other benchmark clients' text output (go-tpc, go-ycsb) into stored runs."""
