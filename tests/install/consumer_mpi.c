/* A program that includes <mpi.h> and weft_mpi.h: weft_build.h refuses it
 * at compile time when its MPI is not the one libweft was built with. */
#include <mpi.h>
#include <weft_mpi.h>
#include <stdio.h>

int main(void)
{
    printf("mpi %s\n", WEFT_MPI_FLAVOR);
    return 0;
}
