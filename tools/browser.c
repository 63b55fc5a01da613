#include "cli.h"
int browse_annotate(const struct perfring_annotate_opts *ao) { return perfring_annotate(ao, stdout); }
