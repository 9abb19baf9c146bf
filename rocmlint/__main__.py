import sys

from rocmlint.cli import main

sys.exit(main())
