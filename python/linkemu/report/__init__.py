"""`linkemu report FILE... [-o OUT.html]`: a self-contained HTML page of one
or more lab results files (tables beside the published numbers, PNG plots
embedded as data URIs), drawn from the files alone."""
