# Embeds a text file (PTX) in a C source as a NUL-terminated char array.
#   cmake -DIN=file.ptx -DOUT=file.c -DSYMBOL=name -P embed_text.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# 24 bytes per line keeps the source readable for diffs and tools
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){24})" "\\1\n  " bytes "${bytes}")
get_filename_component(name ${IN} NAME)
file(WRITE ${OUT}.tmp "/* ${name}, embedded by cmake/embed_text.cmake.  Do not edit. */\nconst char ${SYMBOL}[] = {\n  ${bytes}0x00};\n")
file(RENAME ${OUT}.tmp ${OUT})
