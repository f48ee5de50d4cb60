# The agent commits during the turn, then keeps editing.
sed -i 's/two/TWO/' a.txt
git commit -q -am 'commit made during the turn'
printf 'new\n' > b.txt
