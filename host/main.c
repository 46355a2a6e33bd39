#include "leakaudit.h"
#include <stdio.h>
int main(void) { printf("leakaudit %s\n", la_version()); return 0; }
