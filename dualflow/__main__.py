import sys

from dualflow.cli import main

sys.exit(main())
