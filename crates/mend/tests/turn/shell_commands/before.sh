# A change made before the turn, which `git checkout --` throws away in it.
printf 'edited before the turn\n' > dirty.txt
