
# init_craft.rb
