"""sysbench"""
