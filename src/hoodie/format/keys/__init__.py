"""Record keys and partition paths: Hudi's key generators, Java text rendering, Joda date patterns, partition paths as folders."""
