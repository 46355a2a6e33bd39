# models.cmake - where the built-in sentence encoder looks for installed models by default:
# the models/ folder that scripts/install-deps.sh fills (LEAKAUDIT_MODELS overrides it at run time).
set(LA_MODELS_DIR "${CMAKE_SOURCE_DIR}/models" CACHE PATH "Default folder of installed encoder models")
set_property(SOURCE ${CMAKE_SOURCE_DIR}/host/model.c APPEND PROPERTY COMPILE_DEFINITIONS
             LA_MODELS_DIR="${LA_MODELS_DIR}")
