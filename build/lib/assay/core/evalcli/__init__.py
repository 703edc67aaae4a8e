"""`assay eval`: the command line's domain (config, local runner, run files, compare).

No click here: the commands in assay/cli/ parse arguments and call these modules.
"""
