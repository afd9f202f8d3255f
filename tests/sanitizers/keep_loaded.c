/* Preloaded into the tests of instrumented builds: dlclose does nothing, so
 * the plugins Open MPI and UCX unload at finalize stay mapped and the
 * frames of what they leak keep a library name, which lsan.supp matches
 * (an unloaded library's frames read "<unknown module>" and could only be
 * suppressed all together, weft's included). */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
