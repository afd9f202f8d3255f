/* A program built against an installed weft, by pkg-config and by CMake. */
#include <weft.h>
#include <stdio.h>

int main(void)
{
    /* linking is what is tested; a call makes sure the symbol resolves */
    printf("%s\n", weft_strerror(WEFT_OK));
    return 0;
}
