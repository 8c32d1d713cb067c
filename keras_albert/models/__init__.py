"""keras-hub roles for ALBERT: backbone, tokenizer, preprocessors, tasks."""
