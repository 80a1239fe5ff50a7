"""Where the explorer's heads come from, each turned into the page's data dict: the
hand-designed heads (``heads``, ``hand``), attnlab's models (``traces``, ``models``), Hugging Face
folders (``hf``, ``hf_files``) and weights from any library (``tensors``); ``build`` is what
they share."""
