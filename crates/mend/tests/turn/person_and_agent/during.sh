# The agent edits the top of a file, the person its bottom: both show.
sed -i 's/line 1$/line 1 (agent)/' shared.txt
sed -i 's/line 10/line 10 (person)/' shared.txt
mkdir -p build
echo 'built' > build/app
