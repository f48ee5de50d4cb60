# A turn made only of shell commands.
sed -i 's/let y = 2;/let y = 20;/' src/main.rs
# A formatter: writes the file anew beside it and renames it over it.
awk '{ gsub(/ +/, " "); print }' src/fmt.c > src/fmt.c.tmp && mv src/fmt.c.tmp src/fmt.c
git checkout -- dirty.txt
rm doomed.txt
mv old_name.txt new_name.txt
chmod +x run.sh
ln -s src/main.rs main_link
ln -sf run.sh becomes_link
mkdir gen
for i in $(seq -w 1000); do echo "generated $i" > "gen/file$i.txt"; done
rm doc/notes
mkdir doc/notes
echo 'now a folder' > doc/notes/index.md
printf 'bin\000ary' > image.bin
mkdir -p target
echo 'ignored: not listed' > target/out.o
# A large file: listed with its size, never diffed.
yes 'a log line' | head -n 200000 > big.log
