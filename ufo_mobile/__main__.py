import sys

from ufo_mobile.cli import main

sys.exit(main())
