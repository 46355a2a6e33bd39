# python.cmake - what the Python wheel holds (pyproject.toml installs only the component "python",
# into the leakaudit package folder): the shared library the binding loads with ctypes, as one
# file (wheels keep no symbolic links), and the program, which the package's tests compare against.
install(FILES $<TARGET_FILE:leakaudit_shared> DESTINATION lib COMPONENT python)
install(TARGETS leakaudit RUNTIME DESTINATION bin COMPONENT python)
