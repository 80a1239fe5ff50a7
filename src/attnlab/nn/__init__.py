"""attnlab.nn"""
