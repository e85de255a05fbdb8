import sys

from chainlab.cli import main

sys.exit(main())
