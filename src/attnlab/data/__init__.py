"""attnlab.data"""
