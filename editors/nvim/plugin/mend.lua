require('mend').commands()
