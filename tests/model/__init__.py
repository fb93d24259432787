"""Link-model tests on the bed "lm" (a package, so that its conftest and
helpers never shadow another test directory's in one pytest session)."""
