# Embeds a text file (PTX) in a C source as a NUL-terminated char array:
# the assembler's .incbin reads the file's bytes where the C file is
# compiled, so neither this script nor the compiler turns them into a
# 25 MB array initializer (which took gcc about 20 s a file).
#   cmake -DIN=file.ptx -DOUT=file.c -DSYMBOL=name -P embed_text.cmake
# The C file names IN's SHA-256, so that it changes whenever IN does: a
# compiler cache (ccache), which does not read what .incbin reads, then
# compiles it again.
get_filename_component(name ${IN} NAME)
get_filename_component(path ${IN} ABSOLUTE)
file(SHA256 ${IN} sha)
if(path MATCHES "[\"\\\\]")
  message(FATAL_ERROR "embed_text.cmake: ${path}: a path with a quote or a backslash cannot be .incbin'd")
endif()
file(WRITE ${OUT}.tmp "/* ${name}, embedded by cmake/embed_text.cmake.  Do not edit. */
/* const char ${SYMBOL}[]: the file's bytes (SHA-256 ${sha}), then a NUL */
__asm__(\".section .rodata\\n\"
        \".global ${SYMBOL}\\n\"
        \".type ${SYMBOL}, %object\\n\"
        \".balign 16\\n\"
        \"${SYMBOL}:\\n\"
        \".incbin \\\"${path}\\\"\\n\"
        \".byte 0\\n\"
        \".size ${SYMBOL}, . - ${SYMBOL}\\n\"
        \".previous\\n\");
")
file(RENAME ${OUT}.tmp ${OUT})
