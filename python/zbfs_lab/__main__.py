import sys

from zbfs_lab.cli import main

sys.exit(main())
