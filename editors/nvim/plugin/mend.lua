require('mend').commands()
require('mend').highlights()
