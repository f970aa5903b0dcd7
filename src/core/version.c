#include "topocoll.h"

int TC_Get_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = TC_VERSION_MAJOR;
    if (minor)
        *minor = TC_VERSION_MINOR;
    if (patch)
        *patch = TC_VERSION_PATCH;
    return MPI_SUCCESS;
}
