from dualflow.cli import run

run()
