"""What every layer shares: the solution and verdict records, GPU facts, package versions.

May import nothing else of kbench.
"""
